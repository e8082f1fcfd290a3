"""python -m jurybench.cli"""

from jurybench.cli import main

main()
