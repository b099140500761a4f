package io.gantry.placement;

import io.gantry.placement.core.GpuSharing;
import io.micronaut.context.exceptions.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BackendFactorySharingTest {

    @Test
    void theOvercommitAndMigShapesAreReadAndValidatedAtStart() {
        GpuSharing sharing = BackendFactory.sharing("1.5", Map.of("GH200", "H100-80GB"));

        assertThat(sharing.milliCapacity()).isEqualTo(1500);
        assertThat(sharing.mig().shape("GH200", 97_280)).isEqualTo("H100-80GB");
        assertThat(BackendFactory.sharing("1.0", Map.of())).isEqualTo(GpuSharing.DEFAULT);
        assertThatThrownBy(() -> BackendFactory.sharing("0.9", Map.of())).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("gantry.placement.gpu-overcommit: GPU overcommit must be a finite factor >= 1.0");
        assertThatThrownBy(() -> BackendFactory.sharing("lots", Map.of())).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("gantry.placement.gpu-overcommit must be a number >= 1.0");
        assertThatThrownBy(() -> BackendFactory.sharing("1.0", Map.of("B200", "B200-192GB")))
                .isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("gantry.placement.mig: GPU model B200: unknown MIG shape `B200-192GB`");
    }
}
