"""What a replay leaves for people and CI: summaries, reports, comparisons, checks and plots."""
