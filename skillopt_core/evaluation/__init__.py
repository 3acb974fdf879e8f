"""Evaluation: rollouts of the target under a skill (bounded concurrency,
content-addressed cache) and the validation gate that decides whether a
candidate skill is kept."""
