"""A minimal, working benchmark to copy when adding a new one (see README.md).

Importing this package registers the ``_template`` env.
"""

from skillopt_core.envs._template.adapter import TemplateEnv
from skillopt_core.envs._template.loader import ITEMS, item_to_task, load_items

__all__ = ["ITEMS", "TemplateEnv", "item_to_task", "load_items"]
