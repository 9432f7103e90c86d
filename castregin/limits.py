"""The bounds castregin puts on sizes a user chooses, in one place (the README lists them).

Each guards against a command that would otherwise run for hours or be killed by the kernel; each is
far above what a track needs. Nothing here imports anything, so the command line can use it for its
option ranges without loading numpy.
"""

#: Cutoffs of measures (P@k, ndcg_cut_k): rankings are never this deep.
MAX_CUTOFF = 1_000_000_000
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
