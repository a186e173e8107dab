# -*- coding: utf-8 -*-
# Copyright: kubeletcfg authors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
#
# The controller's half of kubelet_config: node_name defaults to the
# inventory hostname, and src (unless remote_src) is read here and sent as
# content. Everything else happens on the node.

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):

    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        # ActionBase sets these per instance; set before it checks them.
        self._supports_check_mode = True
        self._supports_async = True
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        if not args.get("node_name"):
            args["node_name"] = task_vars["inventory_hostname"]
        src = args.get("src")
        try:
            remote_src = boolean(args.get("remote_src", False), strict=True)
        except TypeError as e:
            result.update(failed=True, msg="remote_src: %s" % to_text(e))
            return result
        if src and not remote_src:
            if args.get("content") is not None:
                result.update(failed=True, msg="parameters are mutually exclusive: src|content")
                return result
            try:
                path = self._find_needle("files", src)
            except AnsibleError as e:
                result.update(failed=True, msg="src %s: %s" % (src, to_text(e)))
                return result
            if os.path.isdir(path):
                result.update(failed=True, msg="src %s is a directory on the controller: give a file" % src)
                return result
            try:
                with open(path, "rb") as f:
                    args["content"] = to_text(f.read(), errors="surrogate_or_strict")
            except (IOError, OSError, UnicodeError) as e:
                result.update(failed=True, msg="src %s: %s" % (src, to_text(e)))
                return result
            del args["src"]
            args.pop("remote_src", None)
        wrap_async = self._task.async_val and not self._connection.has_native_async
        result.update(self._execute_module(module_name="kubeletcfg.kubelet.kubelet_config",
                                           module_args=args, task_vars=task_vars, wrap_async=wrap_async))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        if src and not remote_src:
            name_src(result, src)
        return result


def name_src(result, src):
    """The module names the text it was sent content:LINE:COLUMN in its
    messages; it is the operator's src, line for line."""
    def named(text):
        return CONTENT_POSITION.sub(lambda m: src, text) if isinstance(text, str) else text
    if "msg" in result:
        result["msg"] = named(result["msg"])
    if isinstance(result.get("warnings"), list):
        result["warnings"] = [named(w) for w in result["warnings"]]


CONTENT_POSITION = re.compile(r"(?<![\w./-])content(?=:\d)")
