console.log("tiny-api up");
