"""Redaction: what keeps a person's secrets out of everything SkillOpt-Sleep stores or sends.

- :mod:`sleep.redact.redactor`: :class:`Redactor` (the harvest boundary) and
  :func:`scrub_outbound` (every text that leaves the data directory);
- :mod:`sleep.redact.rules`: the span-exact secret rules;
- :mod:`sleep.redact.typed_passwords`: passwords typed in commands and prose;
- :mod:`sleep.redact.public_ids`: values public by construction (hashes, addresses);
- :mod:`sleep.redact.encoded`: base64 / %-encoded and wrapped forms;
- :mod:`sleep.redact.detect_secrets_layer`: the detect-secrets catalogue behind a gate;
- :mod:`sleep.redact.known`: every value a harvest redacted, remembered as keyed hashes.

The names below are the package's API; import the rest from their modules.
"""

from sleep.redact.redactor import IndexRef, OutboundScrubber, Redactor, map_strings, scrub_outbound, scrub_value

__all__ = ["IndexRef", "OutboundScrubber", "Redactor", "map_strings", "scrub_outbound", "scrub_value"]
