"""The judging stage: crowd labels to qrels, and how far the crowd agrees."""
