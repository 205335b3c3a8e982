import { describeRunsc } from "../helpers/runsc.ts";
import { defineDockerSuite } from "./docker-suite.ts";

describeRunsc("docker driver under gVisor (runsc)", () => defineDockerSuite("runsc"));
