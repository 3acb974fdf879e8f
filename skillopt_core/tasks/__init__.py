"""Tasks, judges and data: what a task is, how a response is scored (rule
judges locally, rubric judges through the judge role) and how tasks are split
into train / val / test."""
