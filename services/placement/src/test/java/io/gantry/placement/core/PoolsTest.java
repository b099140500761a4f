package io.gantry.placement.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rules of pools that hold before anything is placed: their names, and node ids unique across pools. */
class PoolsTest {
    @ParameterizedTest(name = "`{0}` is a pool name")
    @ValueSource(strings = {"default", "k8s", "slurm-a100", "0", "abcdefghijklmnopqrstuvwxyz012345"})
    void lowerCaseLettersDigitsAndDashesUpTo32AreAPoolName(String name) {
        assertThat(Pools.checkName(name)).isEqualTo(name);
    }

    @ParameterizedTest(name = "`{0}` is refused")
    @ValueSource(strings = {"", "K8s", "a_b", "a.b", "a b", "abcdefghijklmnopqrstuvwxyz0123456"})
    void anyOtherNameIsRefusedSayingWhatAPoolNameIs(String name) {
        assertThatThrownBy(() -> Pools.checkName(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("pool name `" + name + "` must be 1-32 characters of a-z, 0-9 and -");
    }

    @Test
    void nodeIdsUniqueAcrossPoolsAreAccepted() {
        Map<String, List<String>> nodes = new LinkedHashMap<>();
        nodes.put("sim", List.of("sim-0", "sim-1"));
        nodes.put("gpu", List.of("local"));
        assertThat(Pools.duplicateNode(nodes)).isEmpty();
    }

    @Test
    void aNodeIdListedByTwoPoolsIsNamedWithBothPools() {
        Map<String, List<String>> nodes = new LinkedHashMap<>();
        nodes.put("k8s", List.of("gpu-00", "gpu-01"));
        nodes.put("slurm", List.of("gpu-01", "gpu-02"));
        assertThat(Pools.duplicateNode(nodes))
                .contains("node gpu-01 is in pools k8s and slurm: node ids must be unique across pools");
    }

    @Test
    void aPoolListingTheSameNodeTwiceIsNotADuplicateAcrossPools() {
        assertThat(Pools.duplicateNode(Map.of("sim", List.of("sim-0", "sim-0")))).isEmpty();
    }

    @Test
    void withoutPoolsTheOnlyPoolIsDefault() {
        assertThat(Pools.DEFAULT).isEqualTo("default");
    }
}
