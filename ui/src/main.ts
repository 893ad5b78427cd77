document.getElementById("app")!.textContent = "harness9";
