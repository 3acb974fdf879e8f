"""Nights that replay real work: the target agent acts in a sandboxed checkout.

- :mod:`.modes`: which replay mode a night runs (``sleep.replay``) and the text
  judges of a read-only one;
- :mod:`.sandbox`: the bubblewrap launcher; :mod:`.egress`: its only way out,
  to the CLI's model endpoint; :mod:`.endpoints`: the endpoints each CLI is
  configured with;
- :mod:`.policy`: the commands a task's replay may run;
- :mod:`.backend`: one disposable checkout per rollout, the observed file
  changes and the check commands;
- :mod:`.instances`: a recurring task's instances as items;
- :mod:`.evidence`: per val instance, before/after actions for the reviewer.
"""

__all__ = ["backend", "egress", "endpoints", "evidence", "instances", "modes", "policy", "sandbox"]
