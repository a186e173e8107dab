# -*- coding: utf-8 -*-
# The controller's half of kubelet_config: node_name defaults to the
# inventory hostname, and src (unless remote_src) is read here and sent as
# content. Everything else happens on the node.

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = True
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        if not args.get("node_name"):
            args["node_name"] = task_vars["inventory_hostname"]
        src = args.get("src")
        if src and not args.get("remote_src"):
            try:
                path = self._find_needle("files", src)
            except AnsibleError as e:
                result.update(failed=True, msg="src %s: %s" % (src, to_text(e)))
                return result
            with open(path, "rb") as f:
                args["content"] = to_text(f.read())
            del args["src"]
        result.update(self._execute_module(module_name="kubeletcfg.kubelet.kubelet_config",
                                           module_args=args, task_vars=task_vars))
        return result
