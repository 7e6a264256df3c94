from ctxview.cli import run

run()
