"""Statistics of samples: estimates with intervals, bootstrap, tails, modes, slow ranks, launches, comparisons."""
