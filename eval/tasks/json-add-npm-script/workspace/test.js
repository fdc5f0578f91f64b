console.log("ok");
