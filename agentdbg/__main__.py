from agentdbg.cli import main

main()
