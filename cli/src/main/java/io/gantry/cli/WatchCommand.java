package io.gantry.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.time.Duration;
import java.util.concurrent.Callable;

@Command(name = "watch", mixinStandardHelpOptions = true,
        description = {"Follow a job until it ends: its state, why it waits and its place in the "
        + "queue, where it runs, how long, its newest checkpoint.",
        "Exit code: 0 succeeded, 7 failed, 8 cancelled, 9 --timeout passed, 6 the API unreachable."})
final class WatchCommand implements Callable<Integer> {
    @ParentCommand
    Cli root;

    @Parameters(index = "0", paramLabel = "JOB")
    String job;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "2s", converter = Durations.class,
            description = "how often to look (default 2s)")
    Duration interval;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = Durations.class,
            description = "give up after this long (exit code 9)")
    Duration timeout;

    @Option(names = "--give-up-after", paramLabel = "DURATION", defaultValue = "5m", converter = Durations.class,
            description = "end with exit code 6 when the API has not answered for this long (default 5m; a "
                    + "service restarting is waited for until then)")
    Duration giveUpAfter;

    @Override
    public Integer call() {
        return new Watcher(root).watch(job, interval, timeout, giveUpAfter, false);
    }
}
