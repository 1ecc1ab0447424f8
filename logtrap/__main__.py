from logtrap.cli import main

main()
