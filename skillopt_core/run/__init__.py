"""The run: settings (config), the runtime built from them (env, metered
backends, budget), the trainer loop, its typed events, the run directory and
the in-process entry points."""
