package io.gantry.cli;

import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;

import java.util.concurrent.Callable;

/**
 * Bash/zsh completion for {@code ./gantry}: the CLI's commands and options, and the words the script runs itself
 * (each of those lists its own options with {@code --help}).
 */
@Command(name = "generate-completion", mixinStandardHelpOptions = true,
        description = {"Print a bash/zsh completion script for gantry: source <(./gantry generate-completion)"})
final class CompletionCommand implements Callable<Integer> {
    /** The words ./gantry runs itself rather than handing them to the CLI (see the script's case). */
    static final String[][] SCRIPT_COMMANDS = {
        {"dev", "start Kafka, PostgreSQL and the five services on this machine"},
        {"replay", "replay a GPU-cluster trace through the production cores"},
        {"whatif", "replay an installation's recorded jobs under another configuration"},
        {"loadtest", "end-to-end load test"},
        {"build", "(re)build everything without running the tests"},
    };

    @ParentCommand
    Cli root;

    @Override
    public Integer call() {
        CommandLine cl = new CommandLine(new Cli(root.env()));
        for (String[] c : SCRIPT_COMMANDS) {
            CommandSpec spec = CommandSpec.create().name(c[0]).mixinStandardHelpOptions(true);
            spec.usageMessage().description(c[1]);
            cl.addSubcommand(c[0], spec);
        }
        root.env().out().print(AutoComplete.bash("gantry", cl));
        root.env().out().flush();
        return ExitCode.OK;
    }
}
