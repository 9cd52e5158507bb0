import sys

from taugrad.cli import main

sys.exit(main())
