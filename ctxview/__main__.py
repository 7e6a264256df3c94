import sys

from ctxview.cli import main

sys.exit(main())
