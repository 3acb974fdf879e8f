"""Which of a fixed list of literals a text holds, found in one pass.

The redactor (:mod:`sleep.redact`) gates each of its rules on literals: a
trigger (``aws``, ``bearer``, ``--``), a keyword (``token``, ``passw``), a word
its line must hold too (``mysql``, `` is ``). Testing them one ``in`` at a time
scans the text once per literal (about sixty scans); :class:`LiteralScan` answers
for all of them in one scan with a ``google-re2`` set (an automaton over every
literal) where that package is installed, and with the ``in`` tests otherwise.
Both give exactly the same set: a literal is reported when it is a substring of
the text, nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable

try:  # optional: google-re2 from PyPI (wheels for the common platforms)
    import re2 as _re2
except ImportError:  # pragma: no cover - depends on the installation
    _re2 = None


class LiteralScan:
    """``present(text)``: the literals of ``literals`` that occur in ``text``.

    ``engine`` is ``"re2"`` (one pass of a compiled set) or ``"python"`` (one
    ``in`` per literal); ``use_re2=False`` forces the second (tests compare them).
    """

    def __init__(self, literals: Iterable[str], use_re2: bool = True) -> None:
        self.literals: tuple[str, ...] = tuple(sorted(set(literals)))
        self._set = None
        if use_re2 and _re2 is not None and self.literals:
            try:
                s = _re2.Set.SearchSet(_re2.Options())
                for lit in self.literals:
                    s.Add(_re2.escape(lit))
                s.Compile()
                self._set = s
            except Exception:
                self._set = None
        self.engine = "re2" if self._set is not None else "python"
        self.fallbacks = 0  # texts the set could not take (scanned the plain way)

    def present(self, text: str) -> frozenset[str]:
        if self._set is not None:
            try:
                return frozenset(self.literals[i] for i in self._set.Match(text) or ())  # None: no match
            except (UnicodeError, ValueError, TypeError):  # e.g. a lone surrogate: not UTF-8 encodable
                self.fallbacks += 1
        return frozenset(lit for lit in self.literals if lit in text)
