from kcgen.cli import main

main()
