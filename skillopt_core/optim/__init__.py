"""The optimisation steps: reflect (read rollouts, propose edits), aggregate
(merge similar edits), select (top-K by the learning-rate budget), the
schedule of that budget, and the epoch-boundary slow update and meta notes."""
