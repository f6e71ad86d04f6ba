from agentdbg.entry import main

main()
