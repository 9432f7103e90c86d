"""trec_eval 9.0.8's preference measures (``-R prefs``, ``-R qrels_prefs``) and judgment-group measures
(``-R qrels_jg``), as plain functions on the judgments of one topic and the run's ranking of it.

**Preferences.** A judgment group (JG: one user's information need) prefers document A to B when a
subgroup of it gives A a higher level than B, and transitively through its subgroups. The documents
of a topic's judgments are numbered as trec_eval numbers them: the retrieved ones by the run's order
(score descending, ties by document id *ascending*: trec_eval's preference code sorts them so, unlike
its qrels code), then the others by id. A preference A > B is *fulfilled* when both are retrieved and
A comes first (``_ret``), or only A is retrieved (*implied*, ``_imp``); it fails otherwise, and when
neither is retrieved it only counts as possible. A group with one subgroup is a list of equivalence
classes by level; a group with several is the transitive closure of their preferences (a cycle there
makes trec_eval abort, so castregin refuses it; so is a document given level 0 in one subgroup and
a positive level in another). Relevant means a level above 0, non-relevant a level of 0.

The measures are trec_eval's: ``prefs_simp`` (fulfilled over possible, all groups pooled),
``prefs_pair`` (per pair of documents, the share of the groups preferring it that the ranking agrees
with, averaged over pairs), ``prefs_avgjg`` (fulfilled over possible per group, averaged over groups),
``prefs_avgjg_Rnonrel`` (as avgjg, with as many non-relevant documents as relevant ones in each
group), each also ``_ret`` (both documents retrieved) and ``_imp`` (at least one retrieved), and the
counts ``prefs_num_prefs_poss``, ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret`` (summed, not
averaged, over topics). trec_eval's own quirks that change its numbers are kept and named where they
are: the first judgment level read as -3 (its "no level yet" value), the Rnonrel recount that pairs
the last class with itself, and NaN from 0/0 that zeroes a topic. Where trec_eval would read outside
its arrays, castregin refuses in one line.

**Judgment groups (qrels_jg).** Each group is a qrels of its own; ``map_avgjg``, ``P_avgjg`` and
``Rprec_mult_avgjg`` are map, P and Rprec_mult computed per group (as trec_eval's ``-l`` and ``-J``
say) and averaged over the topic's groups.

Documents are kept as bits of Python integers (one integer per document: the documents it is
preferred to), so that a topic of thousands of judged documents is counted with a few big-integer
operations per document.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..limits import MAX_CUTOFF, MAX_GROUP_LABEL_SLOTS, MAX_PREFERENCE_DOCS, MAX_PREFERENCE_GROUPS
from .measures import CUT_DOUBLE, CUT_LONG, TREC_SETS, parse_cutoffs, split_measure_argument, value_names
from .measures.names import COMMON_FAMILIES, GROUP_FAMILIES, PREFERENCE_FAMILIES, PREFERENCE_SETS
from .measures.precision import CUTOFFS, MULTIPLES_OF_R

#: The preference counts: summed over topics (not averaged) and printed as integers.
PREFERENCE_COUNTS = PREFERENCE_FAMILIES[:3]
#: The measures each ``-R`` format gives, in trec_eval's table order.
FORMAT_FAMILIES = {
    "prefs": COMMON_FAMILIES + PREFERENCE_FAMILIES,
    "qrels_prefs": COMMON_FAMILIES + PREFERENCE_FAMILIES,
    "qrels_jg": COMMON_FAMILIES + GROUP_FAMILIES,
}
#: Default parameters (trec_eval's ``long_cutoff_array`` and ``Rprec_cutoff_array``, as P's and Rprec_mult's).
P_AVGJG_CUTOFFS = CUTOFFS
RPREC_MULT_AVGJG_CUTOFFS = MULTIPLES_OF_R

#: trec_eval's "no level seen yet" marker when it counts a group's levels (``form_prefs_counts.c``).
_NO_LEVEL_YET = -3.0
#: trec_eval's relevance values of a retrieved document outside a group's qrels and of a negative label.
_NOT_JUDGED, _NEGATIVE_LABEL = -1, -2


# --- which measures -m asks for --------------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """A measure family ``-m`` asked for: its name and parameters (cutoffs; empty if it takes none)."""

    name: str
    params: tuple = ()

    def names(self) -> list[str]:
        """The names trec_eval prints: ``P_avgjg_5``, ``Rprec_mult_avgjg_0.20``, or the family's own."""
        if self.name in _CUTOFF_KINDS:
            return list(value_names(self.name, _CUTOFF_KINDS[self.name], self.params))
        return [self.name]


#: The families that take cutoffs, as trec_eval takes them: P_avgjg's are whole numbers (as P's), Rprec_mult_avgjg's
#: multiples of R (as Rprec_mult's).
_CUTOFF_KINDS = {"P_avgjg": CUT_LONG, "Rprec_mult_avgjg": CUT_DOUBLE}


def _multiples(name: str, text: str) -> tuple[float, ...]:
    values = []
    for part in text.split(","):
        if not re.fullmatch(r"[0-9]+\.?[0-9]*|\.[0-9]+", part) or float(part) > MAX_CUTOFF:
            raise InputError(f"measure {name}.{text!r}: {name}'s multiples of R are numbers from 0 to "
                             f"{MAX_CUTOFF} such as 0.5, not {part!r}")
        values.append(float(part))
    if len(set(values)) != len(values):
        raise InputError(f"measure {name}.{text}: duplicate cutoffs (trec_eval refuses them too)")
    return tuple(sorted(values))


def preference_families(args: Iterable[str], rel_info_format: str) -> list[Family]:
    """The families ``trec_eval -R FORMAT -m ARG ...`` prints, in trec_eval's order.

    As trec_eval's ``mark_measure``: a set marks its members, ``name.params`` gives a family its
    parameters (the first ``-m`` that gives some wins; cutoffs sorted, duplicates refused). A measure
    the format cannot give (``map`` from preferences: trec_eval stops with "Can't calculate measure"),
    an unknown name and parameters trec_eval would silently ignore are refused in one line.
    """
    available = FORMAT_FAMILIES[rel_info_format]
    marked: set[str] = set()
    params: dict[str, str] = {}
    for arg in args:
        name, text = split_measure_argument(arg)
        members = PREFERENCE_SETS.get(name) or TREC_SETS.get(name) or (name,)
        for member in members:
            if member not in available:
                raise InputError(_unavailable(name, member, rel_info_format, TREC_SETS["all_trec"]))
        if text is not None:
            if name not in _CUTOFF_KINDS:
                raise InputError(f"measure {arg!r}: {name} takes no parameters (trec_eval would ignore them)")
            params.setdefault(name, text)
        marked.update(members)
    families = []
    for name in available:
        if name not in marked:
            continue
        text = params.get(name)
        if name == "P_avgjg":
            families.append(Family(name, parse_cutoffs(name, text) if text else P_AVGJG_CUTOFFS))
        elif name == "Rprec_mult_avgjg":
            families.append(Family(name, _multiples(name, text) if text else RPREC_MULT_AVGJG_CUTOFFS))
        else:
            families.append(Family(name))
    return families


def _unavailable(asked: str, member: str, rel_info_format: str, trec_families) -> str:
    given = ", ".join(name for name, members in PREFERENCE_SETS.items()
                      if set(members) <= set(FORMAT_FAMILIES[rel_info_format]))
    hint = f"with -R {rel_info_format}, ask for {given} or their measures"
    shown = asked if asked == member else f"{asked} (its {member})"
    if member in PREFERENCE_FAMILIES:
        return (f"measure {shown} needs -R prefs or -R qrels_prefs judgments (trec_eval stops: Can't calculate "
                f"measure); {hint}")
    if member in GROUP_FAMILIES:
        return f"measure {shown} needs -R qrels_jg judgments (trec_eval stops: Can't calculate measure); {hint}"
    if member in trec_families or member == "yaap":
        return f"measure {shown} needs -R qrels judgments (trec_eval stops: Can't calculate measure); {hint}"
    return f"measure {asked!r} is not a trec_eval measure or measure set (trec_eval: illegal measure); {hint}"


# --- preferences: one topic --------------------------------------------------------------------------------


def _bits(indices: Iterable[int]) -> int:
    value = 0
    for index in indices:
        value |= 1 << index
    return value


@dataclass
class GroupCounts:
    """One judgment group of a topic against the run (trec_eval's ``JG``).

    ``possible_*`` include the fulfilled ones; ``rows[i]`` has bit j set when the group prefers
    document i to document j (documents numbered as the module docstring says), ``cols[i]`` (when
    asked for) bit j when it prefers j to i. A group with one subgroup keeps its equivalence
    ``classes`` (document numbers by level, highest level first, each sorted); one with several keeps
    each document's ``levels`` (the last one read).
    """

    fulfilled_ret: int
    possible_ret: int
    fulfilled_imp: int
    possible_imp: int
    possible_neither: int
    num_rel: int
    num_rel_ret: int
    num_nonrel: int
    num_nonrel_ret: int
    rows: dict[int, int]
    classes: list[list[int]] | None = None
    levels: dict[int, float] | None = None
    cols: dict[int, int] | None = None
    name: str = ""

    def class_list(self) -> list[list[int]]:
        """The equivalence classes of a group with one subgroup."""
        if self.classes is None:
            raise ValueError(f"judgment group {self.name} has several subgroups: no classes")
        return self.classes

    def level_map(self) -> dict[int, float]:
        """Each document's level in a group with several subgroups."""
        if self.levels is None:
            raise ValueError(f"judgment group {self.name} has one subgroup: its classes, no levels")
        return self.levels

    def columns(self) -> dict[int, int]:
        """``cols``, which only a count asked for with ``columns`` has."""
        if self.cols is None:
            raise ValueError(f"judgment group {self.name} was counted without its columns")
        return self.cols


@dataclass
class TopicPreferences:
    """A topic's judgment groups (in id order) against the run: ``judged`` documents, of which the first
    ``judged_ret`` (by number) were retrieved, and each document's id (``docs[number]``)."""

    groups: list[GroupCounts]
    judged: int
    judged_ret: int
    docs: list[str]


def _classes(levels: dict[str, float]) -> list[tuple[float, list[str]]]:
    """(level, documents) of each distinct level, highest first (-0.0 and 0.0 are one level, as in C)."""
    by_level: dict[float, list[str]] = {}
    for doc, level in levels.items():
        by_level.setdefault(level, []).append(doc)
    return sorted(by_level.items(), key=lambda pair: -pair[0])


def _subgroup_graph(subgroups: dict[str, dict[str, float]], upward: bool = False) -> dict:
    """The preferences of a group's subgroups as a graph whose reachability is their transitive closure.

    Nodes are documents and, per subgroup and class, a node standing for "this class and every lower
    one" (so a subgroup of k documents adds O(k) edges, not O(k^2)). ``upward`` reverses every edge.
    """
    graph: dict = {}
    for name, levels in subgroups.items():
        classes = [docs for _, docs in _classes(levels)]
        if upward:
            classes.reverse()
        for k, docs in enumerate(classes):
            below = (name, k + 1) if k + 1 < len(classes) else None
            graph[name, k] = list(docs) + ([below] if below else [])
            for doc in docs:
                graph.setdefault(doc, [])
                if below:
                    graph[doc].append(below)
    return graph


class _Cycle(Exception):
    def __init__(self, docs: list[str]):
        super().__init__(docs)
        self.docs = docs


def _postorder(graph: dict) -> list:
    """The nodes with every successor before its node; a cycle raises :class:`_Cycle` (its documents)."""
    done: set = set()
    on_path: dict = {}
    order = []
    for start, successors in graph.items():
        if start in done:
            continue
        stack = [(start, iter(successors))]
        on_path[start] = 0
        while stack:
            node, pending = stack[-1]
            for successor in pending:
                if successor in on_path:
                    path = [n for n, _ in stack[on_path[successor]:]]
                    raise _Cycle([n for n in path if isinstance(n, str)])
                if successor not in done:
                    on_path[successor] = len(stack)
                    stack.append((successor, iter(graph[successor])))
                    break
            else:
                stack.pop()
                del on_path[node]
                done.add(node)
                order.append(node)
    return order


def _closure(subgroups: dict[str, dict[str, float]], number: dict[str, int], upward: bool = False) -> dict[int, int]:
    """For each document of the group, the bits of the documents it is preferred to (``upward``: that are
    preferred to it), through every subgroup, transitively."""
    graph = _subgroup_graph(subgroups, upward)
    reach: dict = {}
    for node in _postorder(graph):
        bits = 0
        for successor in graph[node]:
            bits |= reach[successor]
            if isinstance(successor, str):
                bits |= 1 << number[successor]
        reach[node] = bits
    return {number[node]: bits for node, bits in reach.items() if isinstance(node, str)}


def _last_levels(subgroups: dict[str, dict[str, float]], where: str) -> dict[str, float]:
    """Each document's level in the last subgroup (by id) that lists it, as trec_eval keeps it; a document
    going straight from level 0 to a positive level or back is trec_eval's "both 0 and non-0" error."""
    last: dict[str, float] = {}
    for name in sorted(subgroups):
        for doc, level in subgroups[name].items():
            before = last.get(doc, -1.0)
            if (before > 0 and level == 0) or (before == 0 and level > 0):
                raise InputError(f"{where}: document {doc} has level 0 in one subgroup and a positive level in "
                                 f"another (subgroup {name}); trec_eval stops there (both 0 and non-0 rel_level)")
            last[doc] = level
    return last


def check_preferences(judgments) -> None:
    """Refuse, in one line, what trec_eval cannot evaluate in a prefs or qrels_prefs file (every topic).

    A topic with more documents or groups than castregin's limits; in a group of several subgroups, a
    document at level 0 in one and above 0 in another, or preferences in a cycle (A > B in one subgroup,
    B > A through others: trec_eval aborts with a core dump).
    """
    for topic, groups in judgments.topics.items():
        docs = {doc for group in groups.values() for levels in group.values() for doc in levels}
        if len(docs) > MAX_PREFERENCE_DOCS:
            raise InputError(f"topic {topic} judges {len(docs)} documents; castregin takes at most "
                             f"{MAX_PREFERENCE_DOCS} per topic in preference judgments (trec_eval keeps arrays of "
                             "their square)", source=judgments.source)
        if len(groups) > MAX_PREFERENCE_GROUPS:
            raise InputError(f"topic {topic} has {len(groups)} judgment groups; trec_eval counts the groups that "
                             f"prefer a pair in 16 bits (at most {MAX_PREFERENCE_GROUPS})", source=judgments.source)
        for group, subgroups in groups.items():
            if len(subgroups) < 2:
                continue
            where = _where(judgments, topic, group)
            _last_levels(subgroups, where)
            try:
                _postorder(_subgroup_graph(subgroups))
            except _Cycle as cycle:
                shown = " > ".join(cycle.docs[:4] + (["..."] if len(cycle.docs) > 4 else []) + cycle.docs[:1])
                raise InputError(f"{where}: its subgroups prefer documents in a cycle ({shown}); a group must be "
                                 "consistent (trec_eval aborts); put contradicting judgments in different groups") \
                    from None


def check_group_qrels(qrels) -> None:
    """Refuse, in one line, a qrels_jg topic whose labels trec_eval cannot count: it keeps a count per label
    value from 0 to the largest label, per judgment group, and fails to get the memory (or takes all of
    it) beyond castregin's limit."""
    for topic, groups in qrels.topics.items():
        largest = max(max(labels.values()) for labels in groups.values())
        if (max(largest, 0) + 1) * len(groups) > MAX_GROUP_LABEL_SLOTS:
            raise InputError(f"topic {topic}: label {largest} in {len(groups)} judgment group(s) is too large: "
                             f"trec_eval keeps a count for every label value from 0 to the largest in each group "
                             f"(at most {MAX_GROUP_LABEL_SLOTS} values in all) and fails beyond; use small labels",
                             source=qrels.source)


def _where(judgments, topic: str, group: str) -> str:
    line = judgments.first_lines.get((topic, group))
    source = f"{judgments.source}:{line}: " if judgments.source and line else ""
    return f"{source}judgment group {group} of topic {topic}"


def _area_counts(group: GroupCounts, judged_ret: int) -> None:
    """Count the group's preferences by where its two documents are (trec_eval's areas A1 to A5)."""
    retrieved = (1 << judged_ret) - 1
    counts = [0, 0, 0, 0, 0]  # fulfilled_ret, failed_ret, fulfilled_imp, failed_imp, neither
    for i, row in group.rows.items():
        if i < judged_ret:
            counts[0] += ((row & retrieved) >> (i + 1)).bit_count()
            counts[1] += (row & ((1 << i) - 1)).bit_count()
            counts[2] += (row >> judged_ret).bit_count()
        else:
            counts[3] += (row & retrieved).bit_count()
            counts[4] += (row >> judged_ret).bit_count()
    group.fulfilled_ret, group.fulfilled_imp = counts[0], counts[2]
    group.possible_ret, group.possible_imp = counts[0] + counts[1], counts[2] + counts[3]
    group.possible_neither = counts[4]


def _class_group(levels: dict[str, float], number: dict[str, int], judged_ret: int, columns: bool) -> GroupCounts:
    """A group with one subgroup: equivalence classes by level (trec_eval's EC form)."""
    classes = [(level, sorted(number[doc] for doc in docs)) for level, docs in _classes(levels)]
    if classes[0][0] == _NO_LEVEL_YET:
        # trec_eval counts the classes from -3, its "no level yet" value: when the highest level is -3
        # it counts one class too few and leaves the lowest class out of everything.
        classes.pop()
    group = GroupCounts(0, 0, 0, 0, 0, 0, 0, 0, 0, {}, classes=[members for _, members in classes])
    below = 0
    for level, members in reversed(classes):
        retrieved = sum(1 for i in members if i < judged_ret)
        if level > 0:
            group.num_rel += len(members)
            group.num_rel_ret += retrieved
        else:
            group.num_nonrel += len(members)
            group.num_nonrel_ret += retrieved
        for i in members:
            group.rows[i] = below
        below |= _bits(members)
    if columns:
        above, group.cols = 0, {}
        for members in group.class_list():
            group.cols.update((i, above) for i in members)
            above |= _bits(members)
    _area_counts(group, judged_ret)
    return group


def _closure_group(subgroups: dict[str, dict[str, float]], number: dict[str, int], judged_ret: int,
                   where: str, columns: bool) -> GroupCounts:
    """A group with several subgroups: the transitive closure of their preferences (trec_eval's array form)."""
    levels = {number[doc]: level for doc, level in _last_levels(subgroups, where).items()}
    try:
        rows = _closure(subgroups, number)
    except _Cycle:
        raise InputError(f"{where}: its subgroups prefer documents in a cycle (trec_eval aborts)") from None
    group = GroupCounts(0, 0, 0, 0, 0, 0, 0, 0, 0, rows, levels=levels,
                        cols=_closure(subgroups, number, upward=True) if columns else None)
    for i, level in levels.items():
        # Levels below 0 (and documents of other groups) are neither relevant nor non-relevant here.
        if level > 0:
            group.num_rel += 1
            group.num_rel_ret += i < judged_ret
        elif level == 0:
            group.num_nonrel += 1
            group.num_nonrel_ret += i < judged_ret
    _area_counts(group, judged_ret)
    return group


def topic_preferences(groups: dict[str, dict[str, dict[str, float]]], ranking: Sequence[str], where: str = "",
                      columns: bool = False) -> TopicPreferences:
    """A topic's judgment groups (``{group: {subgroup: {doc: level}}}``) against the run's ``ranking`` (its
    documents in trec_eval's preference order: score descending, ties by id ascending, cut by ``-M``).

    ``columns`` also keeps, per group, who is preferred to each document (for prefs_pair).
    """
    judged = {doc for subgroups in groups.values() for levels in subgroups.values() for doc in levels}
    retrieved = [doc for doc in ranking if doc in judged]
    seen = set(retrieved)
    docs = retrieved + sorted(doc for doc in judged if doc not in seen)
    number = {doc: i for i, doc in enumerate(docs)}
    counted = []
    for name in sorted(groups):
        subgroups = groups[name]
        if len(subgroups) == 1:
            group = _class_group(next(iter(subgroups.values())), number, len(retrieved), columns)
        else:
            group = _closure_group(subgroups, number, len(retrieved), f"{where}judgment group {name}", columns)
        group.name = name
        counted.append(group)
    return TopicPreferences(counted, len(docs), len(retrieved), docs)


# --- preferences: the measures of one topic ------------------------------------------------------------


def _ratio(numerator: float, denominator: float) -> float:
    """C's double division: x/0 is inf, 0/0 is NaN (trec_eval divides without a check in places)."""
    if denominator:
        return numerator / denominator
    return math.nan if numerator == 0 else math.copysign(math.inf, numerator)


def _average_over_groups(ratios: Iterable[float], num_groups: int) -> float:
    # trec_eval sums the groups' ratios in order and keeps the mean only if the sum is above 0: a NaN
    # (0/0) anywhere makes the topic's value 0.
    total = 0.0
    for ratio in ratios:
        total += ratio
    return total / num_groups if total > 0.0 else 0.0


def _rnonrel_ratio(group: GroupCounts, judged: int, judged_ret: int, retrieved_only: bool, where: str) -> float:
    """prefs_avgjg_Rnonrel(_ret)'s ratio for one group: as many non-relevant documents as relevant ones."""
    if retrieved_only:
        rel, nonrel = group.num_rel_ret, group.num_nonrel_ret
        fulfilled, possible = group.fulfilled_ret, group.possible_ret
    else:
        rel, nonrel = group.num_rel, group.num_nonrel
        fulfilled = group.fulfilled_ret + group.fulfilled_imp
        possible = group.possible_ret + group.possible_imp + group.possible_neither
    if rel >= nonrel:
        # Each retrieved relevant document is taken to come before the R - N non-relevant ones missing
        # (trec_eval adds num_rel, not num_rel_ret, to the possible ones of _ret too).
        fulfilled += group.num_rel_ret * (rel - nonrel)
        possible += group.num_rel * (rel - nonrel)
        return _ratio(fulfilled, possible)
    keep = (1 << judged_ret) - 1 if retrieved_only else (1 << judged) - 1
    if group.classes is not None:
        pairs = _recount_classes(group, rel, judged_ret, retrieved_only, where)
    else:
        pairs = _recount_closure(group, judged, judged_ret, retrieved_only)
    fulfilled = possible = 0
    for i, targets in pairs:
        kept = targets & keep
        fulfilled += (kept >> (i + 1)).bit_count() if i < judged_ret else 0
        possible += kept.bit_count()
    return _ratio(fulfilled, possible)


def _recount_classes(group: GroupCounts, rel: int, judged_ret: int, retrieved_only: bool, where: str):
    """(document, bits of the documents it is compared with) of trec_eval's Rnonrel recount of a class group.

    trec_eval takes the first R (by number) of the last class as the non-relevant ones kept, compares
    every class but the last with the classes below it save the last, and every class, *the last one
    included* (so the kept documents with themselves and the rest of their class), with the kept ones.
    """
    classes = group.class_list()
    last = classes[-1]
    if rel > len(last) and (not retrieved_only or all(i < judged_ret for i in last)):
        raise InputError(f"{where}: its lowest class of levels has {len(last)} document(s), fewer than the {rel} "
                         "relevant ones that prefs_avgjg_Rnonrel keeps from it (levels below 0 beside level 0): "
                         "trec_eval reads past its list here; drop the negative levels or that measure")
    kept = _bits(last[:rel])
    between = 0
    pairs: list[tuple[int, int]] = []
    for members in reversed(classes[:-1]):
        pairs.extend((i, between | kept) for i in members)
        between |= _bits(members)
    pairs.extend((i, kept) for i in last)
    if retrieved_only:
        pairs = [(i, targets) for i, targets in pairs if i < judged_ret]
    return pairs


def _recount_closure(group: GroupCounts, judged: int, judged_ret: int, retrieved_only: bool):
    """(document, bits) of trec_eval's Rnonrel recount of a closure group: the non-relevant documents after
    the first num_rel ones (by number; among the retrieved only for _ret, still counting to num_rel) left out."""
    nonrel_seen = 0
    first_dropped = judged_ret if retrieved_only else judged
    for i in range(first_dropped):
        if group.level_map().get(i) == 0.0:
            nonrel_seen += 1
            if nonrel_seen == group.num_rel + 1:
                first_dropped = i
                break
    dropped = _bits(i for i, level in group.level_map().items() if level == 0.0 and i >= first_dropped)
    limit = judged_ret if retrieved_only else judged
    return [(i, row & ~dropped) for i, row in group.rows.items() if i < limit and not dropped >> i & 1]


# Bit k of a byte spread to a byte (_SPREAD_8) or a little-endian 16-bit lane (_SPREAD_16) of its own, so
# that one integer addition counts, per document, the groups with a preference (fewer than 2^16).
_SPREAD_8 = [bytes((byte >> k) & 1 for k in range(8)) for byte in range(256)]
_SPREAD_16 = [bytes(b for k in range(8) for b in ((byte >> k) & 1, 0)) for byte in range(256)]


def _spread(bits: int, size: int, table: list[bytes]) -> bytes:
    return b"".join(map(table.__getitem__, bits.to_bytes(size, "little")))


def _lanes(value: int, size: int) -> array:
    lanes = array("H", value.to_bytes(16 * size, "little"))
    if sys.byteorder == "big":
        lanes.byteswap()
    return lanes


def _pair_sums(topic: TopicPreferences) -> tuple[list[float], list[int]]:
    """prefs_pair's running sum after the pairs of two retrieved documents and after those of one, and the
    number of pairs of two, one and no retrieved documents.

    A pair i < j (by number) is worth the share of the groups preferring one of them to the other that
    prefer i. trec_eval adds these shares into one sum in the order of i, then j: the pairs of two
    retrieved documents first, then those with only i retrieved. A pair no group disagrees on adds
    exactly 1 or 0, so only a row with disagreements is added pair by pair.
    """
    n, njr = topic.judged, topic.judged_ret
    forward, backward = [0] * n, [0] * n
    for group in topic.groups:
        for i, row in group.rows.items():
            forward[i] |= row
        for i, col in group.columns().items():
            backward[i] |= col
    size = (n + 7) // 8
    retrieved = (1 << njr) - 1
    total, sums, pairs = 0.0, [], [0, 0, 0]
    for part in (0, 1):
        for i in range(njr):
            area = (retrieved if part == 0 else ~retrieved) & ~((1 << (i + 1)) - 1)
            pairs[part] += ((forward[i] | backward[i]) & area).bit_count()
            if not forward[i] & backward[i] & area:
                total = _add_ones(total, (forward[i] & area).bit_count())
                continue
            ahead = behind = 0
            for group in topic.groups:
                ahead += int.from_bytes(_spread(group.rows.get(i, 0), size, _SPREAD_16), "little")
                behind += int.from_bytes(_spread(group.columns().get(i, 0), size, _SPREAD_16), "little")
            ahead_of, behind_of = _lanes(ahead, size), _lanes(behind, size)
            marks = _spread(forward[i] & area, size, _SPREAD_8)
            j = marks.find(1)
            while j >= 0:
                total += ahead_of[j] / (ahead_of[j] + behind_of[j])
                j = marks.find(1, j + 1)
        sums.append(total)
    for i in range(njr, n):
        pairs[2] += ((forward[i] | backward[i]) >> (i + 1)).bit_count()
    return sums, pairs


def _add_ones(total: float, count: int) -> float:
    """``total`` + 1.0, ``count`` times, each sum rounded as a C double (exact at once for a whole total)."""
    if total.is_integer():
        return total + count
    for _ in range(count):
        total += 1.0
    return total


def preference_values(topic: TopicPreferences, wanted: Iterable[str], where: str = "") -> dict[str, float | int]:
    """Each preference measure in ``wanted`` for one topic (counts as ints, the rest as floats)."""
    wanted = set(wanted)
    groups = topic.groups
    n, njr = topic.judged, topic.judged_ret
    ful_ret = sum(g.fulfilled_ret for g in groups)
    ful_imp = sum(g.fulfilled_imp for g in groups)
    poss_ret = sum(g.possible_ret for g in groups)
    poss_imp = sum(g.possible_imp for g in groups)
    poss_neither = sum(g.possible_neither for g in groups)
    values: dict[str, float | int] = {
        "prefs_num_prefs_poss": poss_ret + poss_imp + poss_neither,
        "prefs_num_prefs_ful": ful_ret + ful_imp,
        "prefs_num_prefs_ful_ret": ful_ret,
        "prefs_simp": (ful_ret + ful_imp) / (poss_ret + poss_imp + poss_neither)
        if poss_ret + poss_imp + poss_neither else 0.0,
        "prefs_simp_ret": ful_ret / poss_ret if poss_ret else 0.0,
        "prefs_simp_imp": (ful_ret + ful_imp) / (poss_ret + poss_imp) if poss_ret + poss_imp else 0.0,
    }
    shares = {
        "prefs_avgjg": [(g.fulfilled_ret + g.fulfilled_imp, g.possible_ret + g.possible_imp + g.possible_neither)
                        for g in groups],
        "prefs_avgjg_ret": [(g.fulfilled_ret, g.possible_ret) for g in groups],
        "prefs_avgjg_imp": [(g.fulfilled_ret + g.fulfilled_imp, g.possible_ret + g.possible_imp) for g in groups],
    }
    for name, pairs in shares.items():
        values[name] = _average_over_groups((f / p for f, p in pairs if p), len(groups))
    for name, retrieved_only in (("prefs_avgjg_Rnonrel", False), ("prefs_avgjg_Rnonrel_ret", True)):
        if name in wanted:
            values[name] = _average_over_groups(
                (_rnonrel_ratio(g, n, njr, retrieved_only, f"{where}judgment group {g.name}") for g in groups),
                len(groups))
    if wanted & {"prefs_pair", "prefs_pair_ret", "prefs_pair_imp"}:
        (sum_ret, sum_imp), (pairs_ret, pairs_imp, pairs_neither) = _pair_sums(topic)
        values["prefs_pair_ret"] = sum_ret / pairs_ret if pairs_ret else 0.0
        values["prefs_pair_imp"] = sum_imp / (pairs_ret + pairs_imp) if pairs_ret + pairs_imp else 0.0
        all_pairs = pairs_ret + pairs_imp + pairs_neither
        values["prefs_pair"] = sum_imp / all_pairs if all_pairs else 0.0
    return values


# --- judgment groups (qrels_jg): the measures of one topic ---------------------------------------------


def _relevance_list(labels: dict[str, int], ranking: Sequence[str], judged_only: bool) -> list[int]:
    """trec_eval's relevance of each ranked document for one group: its label, -1 if the group does not
    list it, -2 if its label is negative; with ``-J``, only the documents labelled 0 or more."""
    if judged_only:
        return [labels[doc] for doc in ranking if labels.get(doc, -1) >= 0]
    return [_NOT_JUDGED if doc not in labels else labels[doc] if labels[doc] >= 0 else _NEGATIVE_LABEL
            for doc in ranking]


def group_values(groups: dict[str, dict[str, int]], ranking: Sequence[str], families: Sequence[Family],
                 rel_level: int = 1, judged_only: bool = False) -> dict[str, float]:
    """map_avgjg, P_avgjg and Rprec_mult_avgjg of one topic (``{group: {doc: label}}``) for the run's
    ``ranking`` (trec_eval's order: score descending, ties by id descending, cut by ``-M``).

    Each is its qrels measure per group (relevant: a label of at least ``rel_level``), summed over the
    groups in id order and divided by their number when there are several, as trec_eval adds them.
    """
    totals: dict[str, float] = {}
    for name in sorted(groups):
        labels = groups[name]
        rels = _relevance_list(labels, ranking, judged_only)
        num_rel = sum(1 for label in labels.values() if label >= 0 and label >= rel_level)
        num_rel_ret = sum(1 for rel in rels if rel >= 0 and rel >= rel_level)
        # rel_seen[k]: relevant documents in the first k (trec_eval compares the list's values with the
        # level, so -1 and -2 count as relevant at levels below 0).
        rel_seen = [0]
        for rel in rels:
            rel_seen.append(rel_seen[-1] + (rel >= rel_level))
        for family in families:
            if family.name not in GROUP_FAMILIES:
                continue  # runid and num_q: not measured per group
            values = _group_measure(family, rels, rel_seen, num_rel, num_rel_ret)
            for key, value in zip(family.names(), values, strict=True):
                totals[key] = totals.get(key, 0.0) + value
    if len(groups) > 1:
        totals = {key: value / len(groups) for key, value in totals.items()}
    return totals


def _group_measure(family: Family, rels: list[int], rel_seen: list[int], num_rel: int, num_rel_ret: int):
    num_ret = len(rels)
    if family.name == "map_avgjg":
        precision_sum = 0.0
        for k in range(1, num_ret + 1):
            if rel_seen[k] > rel_seen[k - 1]:
                precision_sum += rel_seen[k] / k
        return [_ratio(precision_sum, num_rel) if rel_seen[-1] else 0.0]
    if family.name == "P_avgjg":
        return [rel_seen[min(cutoff, num_ret)] / cutoff for cutoff in family.params]
    values = []
    for multiple in family.params:
        cutoff = int(multiple * num_rel + 0.9)  # trec_eval: (long) (multiple * R + 0.9)
        if cutoff > num_ret:
            values.append(num_rel_ret / cutoff)
            continue
        # trec_eval walks up from the end of the ranking and stops once no relevant document is left.
        left = num_rel_ret - (rel_seen[-1] - rel_seen[cutoff]) if cutoff >= 1 else 0
        values.append(left / cutoff if left > 0 else 0.0)
    return values
