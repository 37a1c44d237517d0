package dev.proclive.cli;

/** What {@code --help} prints: the whole usage, and each command's own. */
final class HelpText {

    private HelpText() {
    }

    /** {@code proclive --help}. */
    static final String ALL = String.join("\n",
            "usage: proclive COMMAND",
            "",
            "  owner [--skip NAME]... [--of PID] [--trace]",
            "                          print the identity of this command's owner (or PID's): its",
            "                          first ancestor that is not a shell, a launcher or a NAME",
            "                          (exit 3: none); --trace tells each step on stderr",
            "  identify PID            print the identity of process PID (exit 3: none)",
            "  check [JSON]            check an identity given as argument or on stdin; prints",
            "                          {\"liveness\":...,\"reason\":...} (exit 0 alive, 1 dead,",
            "                          2 unknown); stdin is read as UTF-8, up to 1 MiB",
            "  ancestry [--of PID]     print this command's ancestors (or PID's), nearest first:",
            "                          {\"complete\":...,\"chain\":[...identities...]}",
            "  ancestor [JSON]         whether an identity (argument or stdin) is an ancestor of",
            "                          this command: {\"relation\":\"ancestor\",\"depth\":N} (0: the",
            "                          parent); identities on stdin one a line are answered in",
            "                          order from one walk; exit 0 when one is an ancestor, 1 when",
            "                          none can be, 2 otherwise",
            "  ancestor --nearest      which session's owner is the nearest ancestor, from lines",
            "                          {\"key\":...,\"owner\":{...}} on stdin: {\"nearest\":KEY,",
            "                          \"depth\":N} (exit 0), none (1), ambiguous or unknown (2)",
            "  wait [JSON] [--timeout SECONDS]",
            "                          wait for the end of an identity given as for check;",
            "                          prints its verdict, and how it ended where the kernel",
            "                          told (\"exit\":{\"code\":N} or {\"signal\":N,...}); exit 0",
            "                          dead, 1 still alive at the timeout, 2 unknown; without",
            "                          --timeout it waits as long as the process lives",
            "  lease ACTION NAME --dir DIR   a single-writer lease held by a process:",
            "      acquire [--holder owner|PID] [--skip NAME]... [--ttl SECONDS] [--take-unknown]",
            "              [--wait SECONDS] [--print fence]",
            "                          exit 0 granted, 1 held by a live holder, 2 undecided,",
            "                          3 no live holder to name; --print fence prints the fence",
            "                          only when granted (else nothing on stdout)",
            "      run [--wait SECONDS] [--ttl SECONDS] [--take-unknown] [--on-lost term|warn]",
            "          -- COMMAND [ARG]...",
            "                          run COMMAND holding the lease (renewed, released when it",
            "                          exits); exits with its status, 126/127 if it cannot run;",
            "                          a refusal is one line on stderr; a lost lease sends it",
            "                          SIGTERM (--on-lost warn: only says so)",
            "      claim [--holder owner|PID] [--print fence]",
            "                          take the reservation named by $PROCLIVE_LEASE_TOKEN, for",
            "                          that holder or the process run started (it must carry the",
            "                          token; exit 3 if it does not)",
            "      renew --fence N [--ttl SECONDS], release --fence N",
            "                          exit 0 done, 1 not this fence's any more; renew keeps",
            "                          the record's TTL unless --ttl gives one",
            "      show [--print fence], break",
            "                          the record (break: released, ended.how broken, fence",
            "                          kept); exit 3: none",
            "      keep (no NAME; --etcd only)",
            "                          keep this machine's holders' grants alive and end each",
            "                          the moment its holder dies, until TERM or INT",
            "    --etcd URL[,URL]... [--prefix P] [--etcd-ca FILE]   in place of --dir DIR:",
            "                          the leases in etcd (prefix proclive/leases/); a holder on",
            "                          another machine is undecided until its record expires",
            "  demo                    show what proclive tells, with real processes",
            "  --help                  this text",
            "  --version               the version",
            "",
            "Bad input (and a bad lease name or a corrupt record) exits 65, bad usage 64,",
            "an I/O failure 74.");

    /** Each command's usage, printed by {@code proclive COMMAND --help} (and {@code lease ACTION --help}). */
    static final java.util.Map<String, String> COMMANDS = java.util.Map.of(
            "owner", "usage: proclive owner [--skip NAME]... [--of PID] [--trace]\n"
                    + "  prints the identity of this command's owner (or PID's); exit 3: none",
            "identify", "usage: proclive identify PID\n  prints the identity of process PID; exit 3: none",
            "ancestry", "usage: proclive ancestry [--of PID]\n"
                    + "  prints the ancestors of this command (or of PID), nearest first; complete when the walk reached pid 1",
            "ancestor", "usage: proclive ancestor [JSON]\n"
                    + "       proclive ancestor --nearest\n"
                    + "  whether an identity is an ancestor of this command, with its depth (0: the parent) or why it\n"
                    + "  cannot be told; JSON Lines on stdin are answered in order from one walk; exit 0 when one is\n"
                    + "  an ancestor, 1 when none can be, 2 otherwise (65: a bad line). --nearest: lines\n"
                    + "  {\"key\":...,\"owner\":{...}}, answered with the nearest owner's key; exit 0 found, 1 none,\n"
                    + "  2 ambiguous or unknown",
            "check", "usage: proclive check [JSON]\n"
                    + "  checks an identity given as argument or on stdin; exit 0 alive, 1 dead, 2 unknown",
            "wait", "usage: proclive wait [JSON] [--timeout SECONDS]\n"
                    + "  waits for the end of an identity and says how it ended where the kernel told; exit 0 dead,\n"
                    + "  1 alive at the timeout, 2 unknown; without --timeout it waits as long as the process lives",
            "lease", "usage: proclive lease ACTION NAME --dir DIR [OPTION]...\n"
                    + ALL.substring(ALL.indexOf("      acquire"), ALL.indexOf("  demo")).stripTrailing(),
            "demo", "usage: proclive demo\n  shows what proclive tells, with real processes");
}
