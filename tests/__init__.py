"""ctxview's tests: unit/<package>/, tui/ (Pilot and snapshots), acceptance/ (recorded data)."""
