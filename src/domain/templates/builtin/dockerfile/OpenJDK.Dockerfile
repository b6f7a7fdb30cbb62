# kiln Dockerfile template: a Java application built with Maven and run on a JRE.
FROM maven:3-eclipse-temurin-17 AS build
WORKDIR /src
COPY pom.xml ./
RUN mvn --batch-mode dependency:go-offline
COPY src ./src
RUN mvn --batch-mode package -DskipTests

FROM eclipse-temurin:17-jre
COPY --from=build /src/target/*.jar /app/app.jar
USER nobody
ENTRYPOINT ["java", "-jar", "/app/app.jar"]
