"""The original SkillOpt's web UI entry point: ``python -m skillopt_webui.app``.

It starts this project's dashboard (:mod:`sleep.ui`, the same app as
``skillopt-sleep ui``) on http://127.0.0.1:7860 with the same security defaults:
loopback only, an access token in the printed address, CSRF and same-origin
checks on every change. Needs ``pip install -e ".[webui]"``.
"""
