# One image recipe for every Gantry service; docker-compose.yml passes SERVICE and uses services/<SERVICE> as the
# build context. Built over the Maven artifact: run `mvn -B -DskipTests package` first.
FROM eclipse-temurin:17-jre
ARG SERVICE
RUN useradd --system --uid 10001 gantry
WORKDIR /app
COPY target/lib/ /app/lib/
COPY target/gantry-${SERVICE}.jar /app/service.jar
USER gantry
ENV JAVA_TOOL_OPTIONS="-XX:+UseSerialGC -Xmx256m -Dorg.apache.avro.SERIALIZABLE_PACKAGES=io.gantry.events"
ENTRYPOINT ["java", "-jar", "/app/service.jar"]
