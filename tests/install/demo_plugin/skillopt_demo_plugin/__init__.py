"""Test plugin for SkillOpt. Importing the package registers nothing: each
entry point names its own module, so each is loaded only when asked for."""
