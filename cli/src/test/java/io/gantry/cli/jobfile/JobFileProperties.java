package io.gantry.cli.jobfile;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** What a job file holds is what is sent: any job written as YAML reads back as the same tree, every field located. */
class JobFileProperties {

    @Property(tries = 300)
    void aJobWrittenAsYamlReadsBackAsTheSameBodyWithEveryFieldOnALine(@ForAll("jobs") Map<String, Object> job)
            throws Exception {
        DumperOptions o = new DumperOptions();
        o.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        String yaml = new Yaml(o).dump(job);
        JobFile file = JobFile.parse("job.yaml", yaml);
        assertThat(file.body()).isEqualTo(job);
        int lines = (int) yaml.lines().count();
        assertThat(file.lineOf("name")).isBetween(1, lines);
        assertThat(file.lineOf("tasks[0].command[0]")).isBetween(1, lines);
    }

    @Provide
    Arbitrary<Map<String, Object>> jobs() {
        Arbitrary<String> text = Arbitraries.strings().withCharRange('a', 'z').withChars(" -_.:#'\"é日/")
                .ofMinLength(1).ofMaxLength(20).filter(s -> !s.isBlank());
        Arbitrary<Map<String, Object>> task = Combinators.combine(text,
                Arbitraries.longs().between(1, 1024), text.list().ofMinSize(1).ofMaxSize(4),
                Arbitraries.longs().between(0, 1024), Arbitraries.of("H100", "A100", "L4"))
                .as((name, replicas, command, gpus, model) -> {
                    Map<String, Object> t = new LinkedHashMap<>();
                    t.put("name", name);
                    t.put("replicas", replicas);
                    t.put("command", command);
                    t.put("gpus", gpus);
                    t.put("gpuModel", model);
                    return t;
                });
        return Combinators.combine(text, Arbitraries.longs().between(-1000, 1000), task.list().ofMinSize(1).ofMaxSize(3)
                        .uniqueElements(t -> t.get("name")))
                .as((name, priority, tasks) -> {
                    Map<String, Object> j = new LinkedHashMap<>();
                    j.put("name", name);
                    j.put("priority", priority);
                    j.put("tasks", List.copyOf(tasks));
                    return j;
                });
    }
}
