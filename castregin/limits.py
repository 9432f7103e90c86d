"""The bounds castregin puts on sizes a user chooses, in one place (the README lists them).

Each guards against a command that would otherwise run for hours or be killed by the kernel; each is
far above what a track needs. Nothing here imports anything, so the command line can use it for its
option ranges without loading numpy.
"""

#: Cutoffs of measures (P@k, ndcg_cut_k): rankings are never this deep.
MAX_CUTOFF = 1_000_000_000
#: Documents judged in one topic of trec_eval's preference judgments (``trec_eval -R prefs``,
#: ``qrels_prefs``): trec_eval keeps arrays of their square, castregin a bit per pair of them.
MAX_PREFERENCE_DOCS = 10_000
#: Judgment groups of one topic of preference judgments: trec_eval counts the groups that prefer a
#: document to another in 16 bits.
MAX_PREFERENCE_GROUPS = 65_535
#: (Largest label + 1) x judgment groups of one topic of ``trec_eval -R qrels_jg``: trec_eval keeps a
#: count (8 bytes) per label value from 0 to the largest, per group; 2^27 of them is 1 GiB.
MAX_GROUP_LABEL_SLOTS = 1 << 27
#: Labels of a judging scale (0-3 in CAsT-ReGIn): counts are kept per label.
MAX_SCALE_LABELS = 1001
#: Resamples of the randomization test: more add nothing a p-value can show and take minutes.
MAX_PERMUTATIONS = 10_000_000
#: The report's top-k (label plots, judged@k): a figure shows no more ranks.
MAX_REPORT_DEPTH = 100
#: Hashed feature buckets of ``ope estimate``: the solver holds vectors and a sparse system of this size.
MAX_DIM = 1 << 24
#: Bootstrap resamples of ``ope estimate``: each one solves the system again.
MAX_BOOTSTRAP = 100_000
#: Dialogues x padded turns of ``ope estimate``: a few hundred bytes each while the process is indexed.
#: Measured on this project's 2-core machine (``ope simulate --world chat`` dialogues of up to 6 turns,
#: padded with ``--max-turns``; wall time of the whole command, reading included): 10^7 steps as
#: 100,000 x 100 take 14 s (1.2 GB), 10,000 x 1,000 6 s (--features hashed or --state history
#: alike), 1,000 x 10,000 5 s, 100 x 100,000 9 s (0.75 GB). Before the experience reader's fast
#: check, reading 100,000 dialogues alone took 44 s.
MAX_PADDED_STEPS = 10_000_000
#: Padded turns of ``ope estimate`` (``--max-turns``, or the longest dialogue): the pseudo states of
#: the padding form one chain, and the sparse solver's time grows with its square (one dialogue
#: padded to 100,000 turns: 3.6 s; to 200,000: 14 s; 300,000: 28 s; 10^7, once within the limit
#: above: killed after 7 minutes at 5.4 GB).
MAX_TURNS = 100_000
#: Dialogues of ``ope simulate``: a few Python objects each, about a gigabyte per million.
MAX_SIMULATED = 1_000_000
#: Bootstrap resamples of a mean (``analyze bootstrap``, ``evaluate --ci``): drawn in batches, so memory
#: stays small, but each batch takes time.
MAX_RESAMPLES = 1_000_000
#: Labels evaluated with trec_eval's rules (``castregin trec_eval``, and ``evaluate``'s measures its engine
#: lacks). trec_eval allocates and clears a counter for every label value from 0 to each topic's largest, and
#: its nDCG family (ndcg, ndcg_rel, Rndcg, G) matches gains to those levels in time growing with the square
#: of the largest label: measured on trec_eval 9.0.8, a label of 100,000 takes 6 s a topic, 1,000,000 over ten
#: minutes, and from 2^30 on it crashes or hangs. At 1,000 the cost is under a millisecond a topic; a judging
#: scale is far smaller (MAX_SCALE_LABELS). castregin's engine (P, recall, AP, RR, nDCG, Rprec, success,
#: Judged) does not depend on the labels' size and takes any.
MAX_TREC_LABEL = 1000
#: Label multisets ``analyze holes`` tries on one turn (``C(h + L, L)`` for ``h`` holes labelled 0..L under nDCG,
#: ``h + 1`` under a binary measure), each scored twice: 20 holes at labels 0..3 make 1,771. Measured on this
#: project's 2-core machine, 36 holes at labels 0..3 (9,139 multisets, nDCG@36): 0.05 s for a turn (every
#: multiset at once, in arrays as wide as the cutoff); memory and time grow with the multisets.
MAX_HOLE_LABELLINGS = 10_000
#: Bytes a compressed input may decompress to where castregin holds the file whole in memory (banks, crowd
#: CSVs, episodes, runs read by ``trec_eval`` or ``pool``...): a decompression bomb (3 GB of zeros fit in
#: a 3 MB gzip) stops here, not when memory runs out. Streamed inputs (the runs and qrels of ``evaluate``,
#: the JSON runs of ``convert``) are not bounded; plain files neither. Raised by the environment variable
#: ``CASTREGIN_MAX_DECOMPRESSED`` (``4G``; ``none``), read when a file is opened.
MAX_DECOMPRESSED = 1 << 30
#: Times its compressed size an input held whole may decompress to (real runs, qrels, banks, crowd CSVs
#: and episodes: 4 to 26 in gzip, bzip2, xz and zstd; zeros: a thousand in gzip, far more in the others),
#: checked once :data:`RATIO_CHECKED_FROM` bytes are out, so a bomb stops after a few megabytes. Raised
#: by ``CASTREGIN_MAX_COMPRESSION_RATIO`` (``1000``; ``none``).
MAX_COMPRESSION_RATIO = 200
#: Decompressed bytes before the ratio is checked: small files have headers, and short files of one
#: repeated line compress far better than data does.
RATIO_CHECKED_FROM = 16 << 20
#: Levels of nesting of a JSON value checked against a schema (or read from a crowd CSV's cell): castregin's
#: formats nest a few, and deeper values would reach Python's recursion limit in the checks and messages.
MAX_JSON_DEPTH = 100
#: Bootstrap resamples of ``agreement`` (multinomial draws of a confusion matrix, a few microseconds each).
MAX_AGREEMENT_SAMPLES = 1_000_000
#: Confusion matrices in one ``agreement --plot`` figure (a grid of them: more would be unreadable).
MAX_AGREEMENT_PLOT_PAIRS = 36
#: (Subtopic sets) x (relevant items) of one topic for ndeval's greedy ideal ranking: the greedy loop
#: looks at every set for every item it places (10^8 steps: about a minute in Python; CAsT's turns
#: take under 10^4, the TREC Web track's topics under 10^6).
MAX_IDEAL_STEPS = 100_000_000
#: Cutoff of ndeval's measures (alpha_nDCG@k ...): they fill k values a turn whatever the run's length
#: (@10^7 took 43 s and 4 GB for a two-line run); ndeval itself stops at 20, runs at 1,000.
MAX_DIVERSITY_CUTOFF = 10_000
#: Seconds ``castregin judge`` waits for one answer (``--timeout``): a day is far past any model's answer, and
#: the socket's timer overflows on larger ones (``socket.settimeout(1e300)``: "timestamp out of range").
MAX_JUDGE_TIMEOUT = 86_400
#: Instances per experiment ``castregin play privateshared --generate`` draws (``--games``): clembench draws 10.
MAX_GENERATED_GAMES = 1_000
#: The settings of a model endpoint (:class:`castregin.llm.EndpointSettings`; the options of ``judge``,
#: ``nuggets`` and ``play``), each ``name: (lowest, highest or None, whole number?)``: the one statement of
#: their ranges, read by the settings' check and by the commands' options. Concurrency: threads and open
#: connections; retries: a call retried 100 times with the 60-second backoff cap already takes well over an hour.
ENDPOINT_BOUNDS: dict[str, tuple[float, float | None, bool]] = {
    "temperature": (0, 2, False),
    "max_tokens": (1, None, True),
    "concurrency": (1, 256, True),
    "timeout": (0.001, MAX_JUDGE_TIMEOUT, False),
    "max_retries": (0, 100, True),
    "retry_wait": (0, None, False),
    "max_requests": (0, None, True),
    "price_in": (0, None, False),
    "price_out": (0, None, False),
}
#: Samples ``castregin judge --samples`` asks of each prompt: each is a call of every pair.
MAX_JUDGE_SAMPLES = 100
#: Nuggets (or passages) put to a model in one call by ``castregin nuggets assign`` and ``create``
#: (``--window``; nuggetizer's default is 10): each is in the prompt, so a window of thousands is no prompt.
NUGGET_WINDOW_BOUNDS = (1, 1_000)
#: Nuggets one turn may keep (``nuggets create --max-nuggets``; nuggetizer's default is 30).
MAX_NUGGETS_BOUNDS = (1, 1_000)
#: Citations of one sentence judged (``nuggets cite --max-citations``; TREC RAG 2024's support evaluation: 3).
MAX_CITATIONS_BOUNDS = (1, 1_000)
#: Bytes of one answer read from a model endpoint, headers and body, after decompression: a chat completion of
#: 100,000 tokens is about a megabyte of JSON; an endless chunked body or a gzip bomb stops here.
MAX_ANSWER_BYTES = 16 << 20
#: Tokens one answer may report using (``usage``): more is no count a model reports, and SQLite's integers
#: end at 2^63.
MAX_REPORTED_TOKENS = 10**12
#: Characters an API key needs before castregin hides it inside a model's answers (content, refusal,
#: finish_reason). Local servers take dummy keys ("1", "x", "EMPTY", "ollama"): replacing every "1" of an
#: answer by ``***`` would turn "Label: 1" into an unreadable answer, cached for good. A key this short is
#: no secret worth hiding there; error texts still hide a key of any length.
MIN_REDACTED_KEY = 8
#: Characters of one prompt a user's template (``judge --prompt FILE``) may render, and of any string or list
#: it builds on the way: far beyond a model's context (a million tokens is about four million characters).
MAX_PROMPT_CHARS = 4_000_000
#: Seconds one prompt of a user's template may take to render (a real one takes milliseconds): loops nested
#: to 10^10 steps or a macro recursing in two branches stop here.
MAX_PROMPT_SECONDS = 2.0
