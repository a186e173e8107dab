# -*- coding: utf-8 -*-
# Copyright: kubeletcfg authors
# Apache License 2.0 (see LICENSE or https://www.apache.org/licenses/LICENSE-2.0)
"""ansible-test without network, on Debian's packages.

ansible-test sanity makes a virtual environment per test and pip-installs
the versions of pylint, pycodestyle, yamllint, voluptuous, ... it pins, from
PyPI. Here it makes each of them with --system-site-packages (so Debian's
pylint, pycodestyle, yamllint and python3-voluptuous are what the tests run)
and installs nothing. The environments land where ansible-test keeps them
(~/.ansible/test/venv), marked as made: later runs reuse them.

  /usr/bin/python3 ansible_test_offline.py sanity --skip-test changelog --python 3.11
"""

import sys

from ansible_test._internal.commands import sanity
from ansible_test._internal import venv

_create = venv.create_virtual_environment


def create_with_system_packages(args, python, path, system_site_packages=False, pip=False):
    """ansible-test's venv maker, always with the system's packages."""
    return _create(args, python, path, True, pip)


def install_nothing(*args, **kwargs):
    """No pip: what the tests need comes from Debian's packages."""
    return None


sanity.create_virtual_environment = create_with_system_packages
sanity.run_pip = install_nothing

from ansible_test._internal import main  # noqa: E402 (after the patches)

main(sys.argv)
