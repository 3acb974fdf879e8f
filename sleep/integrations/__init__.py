"""Registering SkillOpt-Sleep with the agents' own configuration files.

The plugin scripts in ``plugins/`` stay thin: they find the ``skillopt-sleep``
executable and run ``skillopt-sleep integrate codex|copilot``, which lives here.

- :mod:`sleep.integrations.managed`: edits to a person's files that an
  uninstall undoes byte for byte (the bytes before the first install are kept
  in ``$SKILLOPT_HOME/integrations/``).
- :mod:`sleep.integrations.codex`: the ``[mcp_servers.skillopt]`` table of
  ``$CODEX_HOME/config.toml`` (through ``codex mcp add`` or a TOML library) and
  the Codex skill in ``~/.agents/skills/``.
- :mod:`sleep.integrations.copilot`: the ``skillopt`` server in VS Code's user
  ``mcp.json`` (key ``servers``) and the Copilot CLI's ``mcp-config.json``
  (key ``mcpServers``).
- :mod:`sleep.integrations.command`: which executable the agents should start.
"""
