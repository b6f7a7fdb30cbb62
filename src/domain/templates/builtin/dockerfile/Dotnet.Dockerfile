# kiln Dockerfile template: an ASP.NET Core application.
FROM mcr.microsoft.com/dotnet/sdk:6.0 AS build
WORKDIR /src
COPY . .
RUN dotnet publish --configuration Release --output /out

FROM mcr.microsoft.com/dotnet/aspnet:6.0
WORKDIR /app
COPY --from=build /out ./
EXPOSE 80
# Replace App.dll with your project's assembly.
ENTRYPOINT ["dotnet", "App.dll"]
