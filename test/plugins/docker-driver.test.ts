import { describeDocker } from "../helpers/docker.ts";
import { defineDockerSuite } from "./docker-suite.ts";

describeDocker("docker driver", () => defineDockerSuite("runc"));
