"""A simulated world with exactly known truth, plugged into the engine as an
ordinary env (``sim``) and backend (``sim``) through the registries.
Importing this package registers both."""

from bench.sim.world import OptimizerMix, World, WorldSpec, register_world, world_named
from bench.sim import env as _env  # noqa: F401  (registers the env)
from bench.sim import backend as _backend  # noqa: F401  (registers the backend)
from bench.sim.backend import SimBackend

__all__ = ["OptimizerMix", "SimBackend", "World", "WorldSpec", "register_world", "world_named"]
