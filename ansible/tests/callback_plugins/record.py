# -*- coding: utf-8 -*-
# Test-only callback: every task result as one JSON line, in the order
# Ansible reports them, in the file $KUBELETCFG_RECORD.

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r"""
name: record
type: aggregate
short_description: Write every task result as a JSON line (for the collection's tests)
description:
  - Appends host, task, status and the module's result to the file named by C(KUBELETCFG_RECORD).
requirements:
  - enabled in callbacks_enabled
"""

import json
import os

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "record"
    CALLBACK_NEEDS_ENABLED = True

    def _record(self, status, result):
        path = os.environ.get("KUBELETCFG_RECORD")
        if not path:
            return
        line = dict(host=result._host.get_name(), task=result._task.get_name(), status=status,
                    become=bool(result._task.become), result=result._result)
        self._write(path, line)

    @staticmethod
    def _write(path, line):
        with open(path, "a") as f:
            f.write(json.dumps(line, default=str) + "\n")

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("KUBELETCFG_RECORD")
        if not path:
            return
        hosts = sorted(stats.processed.keys())
        self._write(path, dict(host="", task="", status="stats", result=dict((h, stats.summarize(h)) for h in hosts)))

    def v2_runner_on_ok(self, result):
        self._record("ok", result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record("failed", result)

    def v2_runner_on_skipped(self, result):
        self._record("skipped", result)

    def v2_runner_on_unreachable(self, result):
        self._record("unreachable", result)
