"""transformers.utils.versions.require_version against the simulated versions."""
import operator
import re

from _forgeenv_sim import versions as _v

_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">=": operator.ge, ">": operator.gt}


def require_version(requirement, hint=None):
    m = re.match(r"^([^!=<>\s]+)\s*(.*)$", requirement)
    pkg, spec = m.group(1), m.group(2)
    if not spec:
        return
    have = _v.ACTIVE.get(pkg)
    if have is None:
        try:
            import importlib.metadata as md

            have = md.version(pkg)
        except Exception:
            return
    for part in spec.split(","):
        mm = re.match(r"^\s*(<=|>=|==|!=|<|>)\s*([\d.]+)", part)
        if mm and not _OPS[mm.group(1)](_v.parse(have.split("+")[0]), _v.parse(mm.group(2))):
            raise ImportError("%s is required for a normal functioning of this module, but found %s==%s.%s" % (requirement, pkg, have, ("\n" + hint) if hint else ""))


def require_version_core(requirement):
    return require_version(requirement)
