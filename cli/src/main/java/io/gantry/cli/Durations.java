package io.gantry.cli;

import picocli.CommandLine;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations on the command line as people write them: 500ms, 2s, 5m, 1h, 1d. */
final class Durations implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern FORM = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

    @Override
    public Duration convert(String value) {
        Matcher m = FORM.matcher(value.trim());
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException("must be a duration such as 500ms, 2s, 5m, 1h or 1d, not "
                    + value);
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }
}
