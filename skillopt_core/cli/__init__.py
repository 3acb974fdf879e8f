"""The faces: the ``skillopt`` command line and its console renderer."""
