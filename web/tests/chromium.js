// Debian's chromium, headless, through playwright-core, with WebGPU on SwiftShader (the
// machine has no GPU); WGT_CHROMIUM names another build.
import { chromium } from "playwright-core";

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.WGT_CHROMIUM ?? "/usr/bin/chromium",
    args: ["--enable-unsafe-webgpu", "--enable-features=Vulkan", "--use-vulkan=swiftshader", "--use-webgpu-adapter=swiftshader",
      "--no-sandbox"],
  });
}
