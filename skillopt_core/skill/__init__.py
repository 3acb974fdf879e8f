"""The skill and its edits: the Markdown document being trained (front matter,
protected regions, content hash) and the pure add / delete / replace edits
applied to it."""
