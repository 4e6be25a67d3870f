import sys

from quotactor.cli import main

sys.exit(main())
