"""``python -m sleep``: the ``skillopt-sleep`` command line (:func:`sleep.cli.main`)."""

from sleep.cli import main

raise SystemExit(main())
