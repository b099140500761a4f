package io.gantry.queue.http;

import io.gantry.testkit.OpenApiCoverage;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The OpenAPI document generated at compile time describes every route of the service's controllers. */
class OpenApiDocumentTest {
    @Test
    void everyRouteIsInTheOpenApiDocument() throws Exception {
        assertThat(OpenApiCoverage.routes("io.gantry.queue")).as("the service's routes").isNotEmpty();
        assertThat(OpenApiCoverage.undocumented("io.gantry.queue", getClass().getClassLoader()))
                .as("routes missing from META-INF/swagger/*.yml").isEmpty();
    }
}
