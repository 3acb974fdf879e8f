"""SkillOpt core: train a skill document (Markdown the agent follows) like weights.

Layers: this package never imports ``sleep``; it knows nothing of transcripts,
git or schedules (see ARCHITECTURE.md).
"""

__version__ = "0.1.0"
