"""The nightly cycle: harvest → mine → replay the recurring tasks through the
core trainer → gate → stage a proposal branch. ``skillopt-sleep run`` and
``skillopt-sleep demo`` drive it."""
